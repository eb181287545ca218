INPUTS = [(s,) for s in ['a@b.c', 'ab@b.c', 'john@x.com', 'verylongname@ex.org', '@x.com']]
