"""Browser tests: the clinician viewer in headless Chromium (marker `e2e`)."""
