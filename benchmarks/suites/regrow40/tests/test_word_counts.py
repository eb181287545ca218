from programs.word_counts import word_counts


def test_empty():
    assert word_counts("") == {}


def test_single():
    assert word_counts("one") == {"one": 1}


def test_repeats():
    assert word_counts("a b a") == {"a": 2, "b": 1}


def test_case_and_punctuation():
    assert word_counts("The cat. the CAT!") == {"the": 2, "cat": 2}


def test_pure_punctuation_skipped():
    assert word_counts("... hi !") == {"hi": 1}
