INPUTS = [(s,) for s in ["", "a=1", "a=1&b=2", "a=", "=1", "flag", "a=1&&b=2", "&", "a=1&a=2", "token=ab==",
                         "token=ab==&x=1", "next=/p?x=y", "k=v=w=z", "x=1&y=&z", "name=John%20Doe", "a=b&c=d&e=f",
                         "===", "a==b", "q=search+terms&page=3", "lang=en&debug", "x&y&z", "k=&k=v"]]
