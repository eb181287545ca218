INPUTS = [(s,) for s in ["", "a", "A", "hello", "Hello", "helloWorld", "HelloWorld", "parseJsonData", "XMLParser",
                         "getX", "ABC", "aB", "Ab", "simpleTestCase", "already_snake", "iPhone", "MyHTTPServer",
                         "x1Y2z3", "lowercase", "CamelCaseString"]]
