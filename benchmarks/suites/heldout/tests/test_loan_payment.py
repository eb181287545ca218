from programs.loan_payment import loan_payment
def test_loan_payment():
    assert loan_payment(10000, 0.06, 12) == 860.66
