"""MSCCL algorithm XML out and in (docs/formats.md, "MSCCL algorithm XML"): the entry points
(:mod:`.files`), the XML data model and the executor's limits (:mod:`.xml_model`), the rules an
algorithm must follow (:mod:`.rules`), checks before anything is built (:mod:`.precheck`), where
chunks sit in MSCCL's buffers (:mod:`.layout`), writing (:mod:`.writing`), reading
(:mod:`.reading`), happens-before and races (:mod:`.happens_before`) and the errors
(:mod:`.errors`)."""
