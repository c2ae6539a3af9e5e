"""activity-check: the command line on top of the model, properties and counterexamples packages."""
__version__ = "0.1.0"
