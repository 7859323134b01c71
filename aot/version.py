"""The version of aot, stamped into generated code, exports and tuning records.

It lives apart from the facade (``aot/__init__.py``, which re-exports it as
``aot.__version__``) so the stages that stamp it need not import the facade,
which itself imports the code generator.
"""

__version__ = "0.1.0.dev0"
