from programs.leaderboard import leaderboard

def test_empty():
    assert leaderboard([]) == []

def test_one():
    assert leaderboard([{"name": "ann", "score": 3}]) == ["ann"]

def test_order():
    entries = [{"name": "bo", "score": 1}, {"name": "cy", "score": 7}, {"name": "al", "score": 4}]
    assert leaderboard(entries) == ["cy", "al", "bo"]

def test_ties_by_name():
    entries = [{"name": "zed", "score": 5}, {"name": "amy", "score": 5}, {"name": "kim", "score": 9}]
    assert leaderboard(entries) == ["kim", "amy", "zed"]
