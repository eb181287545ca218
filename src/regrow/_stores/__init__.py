"""The store's backends behind one interface (``_base.Store``): SQLite embedded, PostgreSQL for a fleet."""
