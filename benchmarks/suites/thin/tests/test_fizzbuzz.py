from programs.fizzbuzz import fizzbuzz
def test_fb():
    assert fizzbuzz(15) == "FizzBuzz"
    assert fizzbuzz(9) == "Fizz"
