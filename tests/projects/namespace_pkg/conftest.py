# A rootdir conftest: pytest puts the project folder on sys.path, so `geometry` imports from it.
