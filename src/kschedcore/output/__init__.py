"""What kschedcore writes: explain records, the simulate report, their text and JSON forms."""
