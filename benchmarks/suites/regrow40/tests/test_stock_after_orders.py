from programs.stock_after_orders import stock_after_orders


def test_all_filled():
    assert stock_after_orders(10, [3, 4]) == (3, 0)


def test_exact():
    assert stock_after_orders(7, [7]) == (0, 0)


def test_last_order_too_big():
    assert stock_after_orders(10, [3, 9]) == (0, 1)


def test_first_order_too_big():
    assert stock_after_orders(5, [6, 1]) == (0, 2)


def test_no_orders():
    assert stock_after_orders(0, []) == (0, 0)


def test_zero_order_after_stockout():
    assert stock_after_orders(3, [5, 0]) == (0, 1)


def test_several_unfilled():
    assert stock_after_orders(4, [5, 2, 1]) == (0, 3)
