"""Stream layouts: an order laid out with loads issued ahead and victims evicted late
(`layout`), optionally with victims priced by the stall they cause (`price`)."""
