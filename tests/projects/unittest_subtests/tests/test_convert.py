import unittest

from temperature.convert import to_fahrenheit


class TestToFahrenheit(unittest.TestCase):
    def test_landmarks(self):
        for celsius, fahrenheit in [(0, 32), (100, 212), (-40, -40)]:
            with self.subTest("landmark", celsius=celsius):
                self.assertEqual(to_fahrenheit(celsius), fahrenheit)

    def test_type(self):
        self.assertIsInstance(to_fahrenheit(10), float)


if __name__ == "__main__":
    unittest.main()
