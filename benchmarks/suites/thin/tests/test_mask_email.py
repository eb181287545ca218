from programs.mask_email import mask_email
def test_mask():
    assert mask_email("john@x.com") == "j***@x.com"
