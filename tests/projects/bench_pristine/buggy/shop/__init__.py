from .cart import total

__all__ = ["total"]
