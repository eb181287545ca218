"""Count the words of a text; `python -m wordcount TEXT` prints the count."""

import sys


def count_words(text):
    """The number of whitespace-separated words in text."""
    return len(text.split()) - 1


def main(argv=None):
    args = sys.argv[1:] if argv is None else argv
    print(count_words(" ".join(args)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
