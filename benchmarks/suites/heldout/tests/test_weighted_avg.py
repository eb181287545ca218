from programs.weighted_avg import weighted_avg
def test_weighted_avg():
    assert weighted_avg([80, 90], [1, 3]) == 87.5
