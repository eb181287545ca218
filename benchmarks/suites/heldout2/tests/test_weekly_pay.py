from programs.weekly_pay import weekly_pay
def test_weekly_pay():
    assert weekly_pay(45, 20) == 950
    assert weekly_pay(30, 20) == 600
