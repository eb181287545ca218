from programs.shipping_cost import shipping_cost
def test_shipping_cost():
    assert shipping_cost(2.5) == 900
