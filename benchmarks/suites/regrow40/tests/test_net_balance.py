from programs.net_balance import net_balance


def test_empty():
    assert net_balance([]) == 0


def test_single_deposit():
    assert net_balance([("deposit", 100)]) == 100


def test_deposit_then_withdraw():
    assert net_balance([("deposit", 100), ("withdraw", 30)]) == 70


def test_overdraw():
    assert net_balance([("withdraw", 50)]) == -50


def test_unknown_kind_ignored():
    assert net_balance([("deposit", 10), ("fee", 5), ("withdraw", 3), ("deposit", 1)]) == 8
