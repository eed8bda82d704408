"""What the history keeps for chat: people's and channels' preferences, digest subscriptions, shared files, workspaces
and their sealed tokens."""
