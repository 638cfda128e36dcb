; Import statements; their children are read by references.py.
(import_statement) @import
(import_from_statement) @import
