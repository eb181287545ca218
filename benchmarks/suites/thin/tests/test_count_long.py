from programs.count_long import count_long
def test_long():
    # words strictly longer than n
    assert count_long("a bb ccc", 2) == 1
