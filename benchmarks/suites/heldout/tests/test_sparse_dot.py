from programs.sparse_dot import sparse_dot
def test_sparse_dot():
    assert sparse_dot({0: 2, 1: 3}, {1: 4}) == 12
    assert sparse_dot({0: 1, 2: 3}, {0: 4, 2: 5}) == 19
