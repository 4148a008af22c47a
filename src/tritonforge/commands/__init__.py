"""One module per CLI verb over a shared Session; cli.py wires them."""
