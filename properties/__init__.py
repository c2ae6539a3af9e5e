# Importing model first installs the guard of the compiled hot modules (model/compiled.py),
# some of which are in this package.
import model  # noqa: F401
