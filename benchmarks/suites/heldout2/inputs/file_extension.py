INPUTS = [(s,) for s in ["", "file", "file.txt", "report.PDF", "backup/db.tar.gz", ".bashrc", ".config.yml",
                         "dir.d/file", "dir.d/file.py", "a/b/c.tar.bz2", "trailing.", "archive.TAR.GZ", "/abs/path/x.c",
                         "noext/", "many.dots.in.name.md", "..", "./script.sh", "a.b", "README", "photo.jpeg"]]
