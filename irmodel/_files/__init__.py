"""Files: a loaded model's file context, atomic saves, kernel and direct copies, external data
(reading and writing) and the cache of compiled scan code.  Internal: the public names are
`irmodel.load`, `irmodel.save` and those of `irmodel.external_data_helper`."""
