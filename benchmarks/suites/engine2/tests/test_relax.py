from programs.relax import relax

def test_no_passes():
    assert relax([0, 4, 0], 0) == [0, 4, 0]

def test_one_pass():
    assert relax([0, 4, 8, 0], 1) == [0, 4.0, 2.0, 0]

def test_two_passes():
    assert relax([0, 4, 8, 0], 2) == [0, 1.0, 2.0, 0]

def test_flat():
    assert relax([2, 2, 2], 3) == [2, 2.0, 2]
