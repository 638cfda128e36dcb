"""The ``remora`` command line (DESIGN §11b); see :mod:`.main`."""
