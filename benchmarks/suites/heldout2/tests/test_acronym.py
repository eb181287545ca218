from programs.acronym import acronym
def test_acronym():
    assert acronym("Portable Network Graphics") == "PNG"
    assert acronym("complementary metal-oxide semiconductor") == "CMOS"
