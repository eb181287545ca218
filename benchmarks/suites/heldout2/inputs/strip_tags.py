INPUTS = [(s,) for s in ["", "plain text", "<b>hi</b>", "<p>Hello, <i>world</i>!</p>", "<br/>", "a<b>c",
                         "<a href='x'>link</a> after", "no > tag", "<<>>", "x<y>z<w>v", "<div><span>deep</span></div>",
                         "1 < 2", "tail<", "<img src=\"a.png\"> caption", "<>", "text only >", "<h1>T</h1><p>b</p>",
                         "<!-- c -->kept", "a<b>b</b>c<i>d</i>e", "<ul><li>one</li><li>two</li></ul>", "unclosed <tag text"]]
