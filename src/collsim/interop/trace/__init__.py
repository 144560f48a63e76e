"""Timeline traces in the Chrome trace-event format: the events and their file (:mod:`.events`),
lanes that keep slices from overlapping (:mod:`.lanes`), and the timelines of network schedules
(:mod:`.network`) and of optical schedules (:mod:`.optical`); docs/formats.md, "Timeline traces"."""
