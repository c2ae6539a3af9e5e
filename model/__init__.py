# The compiled hot modules are taken only where built from the source beside them
# (model/compiled.py): installed before any of them is imported.
from model.compiled import install as _install_compiled_guard

_install_compiled_guard()
