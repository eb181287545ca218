"""Model replies, malformed and tricky, and what the parser makes of each: a candidate or a reason."""

from __future__ import annotations

import ast
import dataclasses
import json
import textwrap

import pytest

from regrow._proposers._llm._parse import Rules, parse_reply

ORIGINAL = '''\
def parse_price(text: str, currency: str = "$") -> float:
    return float(text.replace(currency, ""))
'''
FIX = '''\
def parse_price(text: str, currency: str = "$") -> float:
    digits = "".join(c for c in text if c.isdigit() or c == ".")
    return float(digits)
'''
ASYNC_ORIGINAL = "async def fetch(url):\n    return url.upper()\n"
METHOD_ORIGINAL = "def total(self, items):\n    return sum(items) + 1\n"
DEF, RETURN = ORIGINAL.splitlines()
DUPLICATED = (DEF + "\n    if not text:\n        return 0.0\n    if text.startswith(currency):\n        return 0.0\n"
              + RETURN + "\n")


def fenced(code: str, tag: str = "python", fence: str = "```") -> str:
    return f"{fence}{tag}\n{code}{fence}\n"


def sr(search: str, replace: str) -> str:
    """One SEARCH/REPLACE block."""
    return f"<<<<<<< SEARCH\n{search}\n=======\n{replace}\n>>>>>>> REPLACE\n"


@dataclasses.dataclass
class Case:
    id: str
    reply: str
    ok: bool
    expect: str = ""  # a part of the reason (refused) or of the source (accepted)
    original: str = ORIGINAL
    owner: str | None = None
    truncated: bool = False
    allow_signature_change: bool = False
    allow_helpers: bool = False
    note: str = ""  # a part of one of the notes
    absent: str = ""  # must not be in the accepted source


CASES = [
    # -- the shapes a fix arrives in -----------------------------------------------------------------
    Case("fence-python", fenced(FIX), True, 'c == "."'),
    Case("fence-py", fenced(FIX, "py"), True, 'c == "."'),
    Case("fence-Python", fenced(FIX, "Python"), True, 'c == "."'),
    Case("fence-python3", fenced(FIX, "PYTHON3"), True, 'c == "."'),
    Case("fence-untagged", fenced(FIX, ""), True, 'c == "."'),
    Case("fence-tilde", fenced(FIX, "python", "~~~"), True, 'c == "."'),
    Case("fence-four-backticks", fenced(FIX, "python", "````"), True, 'c == "."'),
    Case("fence-info-string", "```python title=fix.py\n" + FIX + "```", True, 'c == "."'),
    Case("unfenced", FIX, True, 'c == "."'),
    Case("prose-around-unfenced", "Here is the fix:\n\n" + FIX + "\nThis keeps only digits.\n", True, "isdigit"),
    Case("prose-glued-to-code", "The corrected function:\n" + FIX + "It now ignores symbols.", True, "isdigit"),
    Case("prose-around-fence", "Sure! The bug is the currency.\n\n" + fenced(FIX) + "\nLet me know.", True,
         "isdigit"),
    Case("original-then-fix", "Before:\n" + fenced(ORIGINAL) + "After:\n" + fenced(FIX), True, "isdigit"),
    Case("fix-then-usage-example", fenced(FIX) + "Usage:\n" + fenced('print(parse_price("$1"))'), True,
         "isdigit"),
    Case("good-then-broken-block", fenced(FIX) + "or shorter:\n" + fenced("def parse_price(text:\n"), True,
         "isdigit"),
    # A docstring's own ``` example, indented with the code, does not close a ``` fence (CommonMark).
    Case("docstring-fence-inside-block", fenced(FIX.replace("    digits", '    """Digits: ```1.5```\n\n    ```\n'
                                                            '    >>> parse_price("$1")\n    ```\n    """\n    digits')),
         True, '    ```\n    """'),
    Case("indented-in-list", "1. Replace it with:\n\n   ```python\n" + textwrap.indent(FIX, "   ") + "   ```\n",
         True, "isdigit"),
    Case("crlf", fenced(FIX).replace("\n", "\r\n"), True, "isdigit"),
    Case("bom", "\ufeff" + fenced(FIX), True, "isdigit"),
    Case("think-preamble", "<think>maybe def parse_price(x): return 0</think>\n" + fenced(FIX), True, "isdigit",
         absent="return 0"),
    Case("json-wrapped", json.dumps({"language": "python", "code": FIX}), True, "isdigit"),
    Case("module-docstring", fenced('"""Fixed."""\n' + FIX), True, "isdigit"),
    Case("two-definitions-last-wins", fenced(ORIGINAL.replace("float(", "int(") + "\n" + FIX), True, "isdigit",
         note="last of several", absent="int("),
    Case("annotations-may-change", fenced(FIX.replace("text: str,", "text,")), True, "isdigit"),
    # -- what is changed on the way --------------------------------------------------------------------
    Case("echoed-regrow-decorator", fenced("@regrow.heal(tests=[test_rupees])\n" + FIX), True, "def parse_price",
         note="stripped the decorator", absent="@"),
    Case("echoed-stacked-decorators", fenced("@functools.cache\n@heal\n" + FIX), True, "def parse_price",
         note="@heal", absent="@"),
    Case("regrow-decorator-on-nested-def", fenced('''\
def parse_price(text: str, currency: str = "$") -> float:
    @regrow.heal
    def clean(t):
        return t.strip(currency)
    return float(clean(text))
'''), True, "def clean", note="from `clean`", absent="regrow"),
    Case("imports-moved-in", fenced("import re\n\n" + FIX.replace('"".join(c for c in text if c.isdigit() or '
                                                                  'c == ".")', 're.sub("[^0-9.]", "", text)')),
         True, "import re", note="imports into the function"),
    Case("future-import-dropped", fenced("from __future__ import annotations\n" + FIX), True, "isdigit",
         note="__future__", absent="__future__"),
    Case("method-echoed-in-class", fenced("class Cart:\n    def total(self, items):\n        return sum(items)\n"),
         True, "return sum(items)\n", original=METHOD_ORIGINAL, owner="Cart", absent="class"),
    Case("async-kept", fenced("async def fetch(url):\n    return url.lower()\n"), True, "url.lower()",
         original=ASYNC_ORIGINAL),
    Case("unclosed-fence-complete-code", "```python\n" + FIX, True, "isdigit", note="not closed"),
    Case("truncated-after-complete-block", fenced(FIX) + "This works because", True, "isdigit", truncated=True),
    Case("helpers-allowed", fenced("def _digits(t):\n    return ''.join(c for c in t if c.isdigit())\n\n"
                                   + ORIGINAL.replace("text.replace(currency, \"\")", "_digits(text)")),
         True, "def _digits", allow_helpers=True, note="helper"),
    Case("signature-change-allowed", fenced("def parse_price(text):\n    return float(text[1:])\n"), True,
         "text[1:]", allow_signature_change=True),
    # -- refusals ----------------------------------------------------------------------------------------
    Case("empty", "", False, "empty"),
    Case("whitespace-only", "  \n\t\n", False, "empty"),
    Case("unclosed-think-only", "<think>The bug is that the currency symbol", False, "empty"),
    Case("prose-only", "The function fails because of the rupee sign. Strip it first.", False, "no Python code"),
    Case("only-bash-block", fenced("pip install prices", "bash"), False, "```bash"),
    Case("wrong-name", fenced(FIX.replace("parse_price", "parse_cost")), False, "`parse_cost` but not `parse_price`"),
    # Before: "the reply defines `parse_price` but not `parse_price`".
    Case("function-echoed-in-a-class", fenced("class Prices:\n" + textwrap.indent(FIX, "    ")), False,
         "defines `parse_price` as a method of class `Prices`, not as a function at top level;"),
    Case("function-nested-in-another", fenced("def outer():\n" + textwrap.indent(FIX, "    ")), False,
         "defines `parse_price` as a function nested in `outer`, not as a function at top level;"),
    Case("method-in-another-class", fenced("class Basket:\n    def total(self, items):\n        return sum(items)\n"),
         False, "as a method of class `Basket`, not as a function at top level or a method of class `Cart`",
         original=METHOD_ORIGINAL, owner="Cart"),
    Case("no-function", fenced("price = float(text)\n"), False, "no function definition"),
    Case("lambda-instead", fenced('parse_price = lambda text, currency="$": 1.0\n'), False, "no function"),
    Case("dropped-parameter", fenced("def parse_price(text: str) -> float:\n    return 1.0\n"), False,
         "signature changed from (text, currency='$') to (text)"),
    Case("changed-default", fenced(FIX.replace('currency: str = "$"', 'currency: str = "€"')), False,
         "signature changed"),
    Case("made-keyword-only", fenced(FIX.replace("text: str, currency", "text: str, *, currency")), False,
         "signature changed"),
    Case("async-dropped", fenced("def fetch(url):\n    return url.lower()\n"), False, "must stay async def",
         original=ASYNC_ORIGINAL),
    Case("syntax-error", fenced("def parse_price(text: str, currency: str = \"$\") -> float:\n    return float(text"
                                ".replace(currency, \"\")\n"), False, "does not parse"),
    Case("mixed-tabs", fenced('def parse_price(text: str, currency: str = "$") -> float:\n    x = 1\n\treturn x\n'),
         False, "does not parse"),
    Case("await-in-plain-def", fenced('def parse_price(text: str, currency: str = "$") -> float:\n'
                                      "    return await text\n"), False, "does not compile"),
    Case("truncated-by-token-limit", "```python\ndef parse_price(text: str, currency: str = \"$\") -> float:\n"
                                     "    digits = [c for c in", False, "cut off by the token limit", truncated=True),
    Case("unclosed-and-incomplete", "```python\ndef parse_price(text: str, currency: str = \"$\") -> float:\n"
                                    "    return float(text.replace(", False, "cut off by the end of the reply"),
    Case("truncated-in-prose", "Let me think about the rupee sign and the comma separators in", False,
         "cut off by the token limit", truncated=True),
    # Test code after the function (a small model continuing the prompt's test) never runs: dropped, not refused.
    Case("top-level-print", fenced(FIX + '\nprint(parse_price("$1"))\n'), True, 'c == "."', note="test code",
         absent="print("),
    Case("main-guard", fenced(FIX + '\nif __name__ == "__main__":\n    parse_price("1")\n'), True, 'c == "."',
         note="test code", absent="__main__"),
    Case("test-function-and-asserts", fenced(FIX + '\ndef test_rupees():\n    assert parse_price("₹1") == 1.0\n\n'
                                             'assert parse_price("$2") == 2.0\n'), True, 'c == "."',
         note="dropped the reply's test code (def test_rupees", absent="assert"),
    Case("top-level-other-call", fenced(FIX + '\nprint("done")\n'), False, "top-level statements"),
    Case("top-level-assignment", fenced("RATE = 1.0\n" + FIX), False, "`RATE = 1.0`"),
    Case("helper-not-allowed", fenced("def _digits(t):\n    return t\n\n" + FIX), False,
         "helper functions and classes are not allowed"),
    Case("unchanged", fenced(ORIGINAL), False, "unchanged from the original"),
    Case("unchanged-but-decorated", fenced("@regrow.heal\n" + ORIGINAL), False, "unchanged"),
    Case("too-long", fenced(FIX) + "#" * 250_000, False, "too long"),
    # -- local edits: SEARCH/REPLACE blocks and unified diffs, applied to the original ---------------------
    Case("search-replace", sr(RETURN, '    return float(text.replace(currency, "").replace(",", ""))'), True,
         'replace(",", "")', note="applied 1 SEARCH/REPLACE edit"),
    Case("search-replace-in-fence", fenced(sr(RETURN, "    return float(text.strip(currency))")), True,
         "text.strip(currency)"),
    Case("search-replace-dedented", sr(RETURN.strip(), 'return float(text.replace(currency, "").strip())'), True,
         '    return float(text.replace(currency, "").strip())\n', note="different whitespace"),
    Case("search-replace-spaces-inside", sr('    return  float(text.replace(currency,  ""))', "    return 2.0"),
         True, "    return 2.0\n", note="different whitespace"),
    Case("search-replace-trailing-spaces", sr(RETURN + "   ", "    return 2.0"), True, "    return 2.0\n"),
    Case("search-replace-blank-lines-around", sr("\n\n" + RETURN + "\n\n", "    return 2.0"), True, "return 2.0"),
    Case("search-replace-two-blocks", sr(DEF, DEF + "\n    text = text.strip()") + "\nand then\n\n"
         + sr(RETURN, "    return float(text[1:])"), True, "text = text.strip()\n    return float(text[1:])",
         note="applied 2 SEARCH/REPLACE edits"),
    Case("search-replace-prose-and-fences-inside", "The currency must go:\n\n<<<<<<< SEARCH\n```python\n" + RETURN
         + "\n```\n=======\n```python\n    return float(text.lstrip(currency))\n```\n>>>>>>> REPLACE\nThat is all.",
         True, "lstrip(currency)"),
    Case("search-replace-aider-words", "<<<<<<< ORIGINAL\n" + RETURN + "\n=======\n    return 3.0\n>>>>>>> UPDATED\n",
         True, "return 3.0"),
    Case("search-replace-not-found", sr("    return float(text)", "    return 1.0"), False,
         "SEARCH/REPLACE block 1 does not apply: the SEARCH part has the line `return float(text)`"),
    Case("search-replace-out-of-order", sr(RETURN + "\n" + DEF, "x = 1"), False, "not together in this order"),
    Case("search-replace-unclosed", "<<<<<<< SEARCH\n" + RETURN + "\n=======\n    return 1.0\n", False,
         "block 1 is not closed with `>>>>>>> REPLACE`"),
    Case("search-replace-no-divider", "<<<<<<< SEARCH\n" + RETURN + "\n>>>>>>> REPLACE\n", False,
         "no `=======` line"),
    Case("search-replace-second-open", "<<<<<<< SEARCH\n" + RETURN + "\n=======\n    return 1.0\n"
         "<<<<<<< SEARCH\n", False, "block 1 is not closed"),
    Case("search-replace-cut-by-token-limit", "<<<<<<< SEARCH\n" + RETURN + "\n", False,
         "ends before its `=======` line (the reply was cut off by the token limit)", truncated=True),
    Case("search-replace-close-before-open", ">>>>>>> REPLACE\n" + sr(RETURN, "    return 1.0"), False,
         "comes before any `<<<<<<< SEARCH`"),
    Case("search-replace-empty-search", sr("", "    x = 1"), False, "empty SEARCH part"),
    Case("search-replace-no-op", sr(RETURN, RETURN), False, "unchanged from the original"),
    Case("search-replace-breaks-syntax", sr(RETURN, "    return float(("), False, "does not parse"),
    Case("search-replace-changes-signature", sr(DEF, "def parse_price(text: str) -> float:"), False,
         "signature changed"),
    Case("diff", fenced("@@ -1,2 +1,2 @@\n " + DEF + "\n-" + RETURN + "\n+    return float(text.strip(currency))\n",
                        "diff"), True, "text.strip(currency)", note="applied 1 diff edit"),
    Case("diff-with-headers-and-wrong-numbers", "--- a/prices.py\n+++ b/prices.py\n@@ -40,7 +40,7 @@\n-" + RETURN
         + '\n+    return float(text.replace(currency, "").strip())\n', True, ".strip())"),
    Case("diff-context-lost-its-space", fenced("@@ -1,2 +1,3 @@\n" + DEF + "\n+    text = text.strip()\n "
                                               + RETURN + "\n", "patch"), True,
         "    text = text.strip()\n    return float(text.replace"),
    Case("diff-unfenced-hunk", "Change it like this:\n@@ @@\n-" + RETURN
         + "\n+    return float(text[len(currency):])\n", True, "text[len(currency):]"),
    Case("diff-with-wrong-context", fenced("-    return float(text)\n+    return 1.0\n", "diff"), False,
         "diff hunk 1 does not apply: the lines to remove has the line `return float(text)`"),
    Case("diff-no-changes", fenced(" " + DEF + "\n", "diff"), False, "the diff changes no line"),
]


def rules_for(case: Case) -> Rules:
    original = ast.parse(case.original).body[0]
    assert isinstance(original, (ast.FunctionDef, ast.AsyncFunctionDef))
    return Rules(original.name, original, case.owner, case.allow_signature_change, case.allow_helpers,
                 source=case.original)


def test_the_corpus_is_large_enough() -> None:
    assert len(CASES) >= 40
    assert len({case.id for case in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_reply(case: Case) -> None:
    rules = rules_for(case)
    parsed = parse_reply(case.reply, rules, truncated=case.truncated)
    if not case.ok:
        assert parsed.source is None, parsed
        assert case.expect in parsed.reason
        return
    assert parsed.source is not None, parsed.reason
    assert case.expect in parsed.source
    if case.absent:
        assert case.absent not in parsed.source
    if case.note:
        assert any(case.note in note for note in parsed.notes), parsed.notes
    # Whatever the shape of the reply, the candidate is one bare definition of the target.
    tree = ast.parse(parsed.source)
    assert len(tree.body) == 1
    definition = tree.body[0]
    assert isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef))
    assert definition.name == rules.name
    assert definition.decorator_list == []
    compile(parsed.source, "<candidate>", "exec")


def test_accepted_source_keeps_the_models_formatting_and_comments() -> None:
    reply = fenced("@regrow.heal\n" + FIX.replace("    return float(digits)", "    # keep the dot\n"
                                                                                   "    return float(digits)"))
    parsed = parse_reply(reply, rules_for(Case("x", "", True)))
    assert parsed.source == FIX.replace("    return float(digits)", "    # keep the dot\n    return float(digits)")


def test_imports_moved_in_run_inside_the_function() -> None:
    reply = fenced('import re\n\ndef parse_price(text: str, currency: str = "$") -> float:\n'
                   '    """Doc."""\n    return float(re.sub("[^0-9.]", "", text))\n')
    parsed = parse_reply(reply, rules_for(Case("x", "", True)))
    assert parsed.source is not None
    namespace: dict[str, object] = {}
    exec(parsed.source, namespace)  # no `re` in these globals: the import must be inside
    assert namespace["parse_price"]("₹1,299.50") == 1299.5  # type: ignore[operator]
    assert ast.get_docstring(ast.parse(parsed.source).body[0]) == "Doc."  # type: ignore[arg-type]


def test_refusals_carry_the_code_they_refused() -> None:
    parsed = parse_reply(fenced(FIX.replace("parse_price", "parse_cost")), rules_for(Case("x", "", True)))
    assert parsed.source is None
    assert "def parse_cost" in parsed.code


def test_an_edit_that_matches_two_places_takes_the_one_nearest_the_fault_or_is_refused() -> None:
    original = ast.parse(DUPLICATED).body[0]
    assert isinstance(original, ast.FunctionDef)
    reply = sr("        return 0.0", "        return None")
    refused = parse_reply(reply, Rules("parse_price", original, source=DUPLICATED))
    assert refused.source is None and "matches 2 places" in refused.reason and refused.edited == "SEARCH/REPLACE"
    near_fault = parse_reply(reply, Rules("parse_price", original, source=DUPLICATED, hint=5))
    assert near_fault.source is not None
    assert near_fault.source.splitlines()[2:6] == ["        return 0.0", "    if text.startswith(currency):",
                                                   "        return None", RETURN]


def test_an_edited_reply_is_the_original_text_with_the_edit_and_nothing_else() -> None:
    original = ORIGINAL.replace("    return", "    # the price, without the currency\n    return")
    node = ast.parse(original).body[0]
    assert isinstance(node, ast.FunctionDef)
    parsed = parse_reply(sr(RETURN, "    return float(text[1:])"), Rules("parse_price", node, source=original))
    assert parsed.source == original.replace('float(text.replace(currency, ""))', "float(text[1:])")  # comment kept
    assert parsed.edited == "SEARCH/REPLACE"


def test_an_edit_needs_the_function_it_edits() -> None:
    parsed = parse_reply(sr(RETURN, "    return 1.0"), Rules("parse_price"))
    assert parsed.source is None and "showed no function to edit" in parsed.reason


def test_an_echo_is_told_apart_from_other_refusals() -> None:
    rules = rules_for(Case("x", "", True))
    assert parse_reply(fenced(ORIGINAL.replace("    return", "    # unchanged\n    return")), rules).echo
    docstring_only = ORIGINAL.replace("    return", '    """The price."""\n    return')
    assert parse_reply(fenced(docstring_only), rules).echo
    assert not parse_reply(fenced(FIX.replace("parse_price", "parse_cost")), rules).echo
    assert not parse_reply(fenced(FIX), rules).echo


DEEP = {  # under MAX_REPLY_CHARS, each too deep for the parser or for ast's own walks (ast.dump, ast.unparse)
    "binop-chain": "    return float(text)" + " + 0" * 40_000,
    "attribute-chain": "    y = text" + ".real" * 30_000 + "\n    return 1.0",
    "slice-chain": "    y = text" + "[0:]" * 30_000 + "\n    return 1.0",
    "unary-chain": "    return " + "- -" * 2_000 + "1.0",
    "parses-but-too-deep-to-walk": "    return float(text)" + " + 0" * 2_000,
    "lambdas": "    y = " + "lambda: " * 5_000 + "1\n    return 1.0",
}


@pytest.mark.parametrize("shape", ["fenced", "bare", "prose"])
@pytest.mark.parametrize("name", list(DEEP))
def test_code_nested_too_deeply_is_refused_with_its_reason_not_raised(name: str, shape: str) -> None:
    code = f"{DEF}\n{DEEP[name]}\n"
    reply = {"fenced": fenced(code), "bare": code, "prose": f"The fix:\n\n{code}\nThat is all."}[shape]
    parsed = parse_reply(reply, rules_for(Case("x", "", True)))  # before: RecursionError, ending the model's turn
    assert parsed.source is None
    assert "nested too deeply" in parsed.reason and "write it with less nesting" in parsed.reason
