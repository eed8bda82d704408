"""What the terminal shows: the views of each command family, the progress bar, and text made safe for a terminal."""
