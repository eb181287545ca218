import pytest
from shop.stock import in_stock, restock


def test_restock_known_item():
    assert restock({"tea": 2}, "tea", 3) == {"tea": 5}


def test_restock_new_item():
    assert restock({}, "jam", 4) == {"jam": 4}


def test_restock_nothing():
    assert restock({"tea": 2}, "tea", 0) == {"tea": 2}


def test_negative_amount_is_refused():
    with pytest.raises(ValueError):
        restock({"tea": 2}, "tea", -1)


def test_in_stock():
    assert in_stock({"tea": 1}, "tea") and not in_stock({}, "tea")
