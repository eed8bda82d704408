"""What the processes on one database do once between them: leases, claims, shared pauses, deliveries, re-judges and
workflow steps."""
