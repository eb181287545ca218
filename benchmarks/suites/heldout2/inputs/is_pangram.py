INPUTS = [(s,) for s in ["", "a", "abc", "The quick brown fox jumps over the lazy dog",
                         "THE QUICK BROWN FOX JUMPS OVER THE LAZY DOG", "Pack my box with five dozen liquor jugs.",
                         "abcdefghijklmnopqrstuvwxy", "abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
                         "Sphinx of black quartz, judge my vow", "hello world", "12345 !@#", "Zz" * 13,
                         "The five boxing wizards jump quickly", "the quick brown fox jumped over the lazy cat",
                         "AbCdEfGhIjKlMnOpQrStUvWxYz", "mixed Case Letters only", "éèà abcdefghijklmnopqrstuvwxyz",
                         "Jackdaws love my big sphinx of quartz", "a-b-c-d-e-f-g-h-i-j-k-l-m-n-o-p-q-r-s-t-u-v-w-x-y-z",
                         "How vexingly quick daft zebras jump!"]]
