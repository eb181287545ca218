from programs.mask_card import mask_card
def test_mask_card():
    assert mask_card("4111222233334444") == "************4444"
