"""The on-disk cache of compiled artefacts (imports no other fusejit stage)."""
