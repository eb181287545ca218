INPUTS = [(s,) for s in ["", "no tags here", "#", "# #", "#a", "#ab", "#A #B #C", "ship it #a #Release",
                         "#Python is #fun", "mid#word tag", "##double", "#x,y", "  #Spaced   #Out  ", "#1 #22 #333",
                         "#UPPER lower #MiXeD", "a # b #c", "#end", "#a#b", "tab\t#tab", "line\n#newline"]]
