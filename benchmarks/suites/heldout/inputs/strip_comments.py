INPUTS = [(s,) for s in ["x = 1  # set x", "x = 1", "# only comment", "", "    y = 2  # indented", "    z = 3",
                         "a # b # c", "url = 'http://x'  #  note", "\tpass\t# tab", "print(1)#tight", "   ", "no comment   ",
                         "  lead", "#", "value = 5 ## double", "  # indented comment", "k=1", "s = 'a' # x", " a ", "q  #"]]
