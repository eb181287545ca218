from programs.clip_list import clip
def test_clip():
    assert clip([-5, 5, 50], 0, 10) == [0, 5, 10]
