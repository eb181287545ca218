INPUTS = [(s,) for s in ["", "a", "Portable Network Graphics", "complementary metal-oxide semiconductor",
                         "as soon as possible", "self-contained underwater breathing apparatus", "x-ray", "-",
                         "  spaced   out  ", "light-emitting diode", "HyperText Markup Language", "one", "a-b-c-d",
                         "frequently asked questions", "end-to-end encryption", "ruby on rails", "--double--dash",
                         "Thank God it's Friday", "point-of-sale", "world wide web"]]
