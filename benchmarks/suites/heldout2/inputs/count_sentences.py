INPUTS = [(s,) for s in ["", "Hello", "Hello.", "Hi. How are you?! Fine.", "...", "Wait... what?", "One! Two! Three!",
                         "No end", "a.b.c", "  .  ", "Really?!?!", "First. Second", "Is it? Yes. No!", ". Leading dot",
                         "Multiple   spaces.   Here.", "Ends with space. ", "!", "x.", "Dr. Smith is here.",
                         "Line one.\nLine two."]]
