-- 003-binary-notes.sql: a warning about a binary that does not stop its
-- code being named, e.g. that its build-id is also that of a different
-- file already in the binary cache (so it is keyed by its contents).
ALTER TABLE binaries ADD COLUMN note TEXT;	-- NULL: none
