"""benchsite site builder: turns every file in results/ into the static leaderboard site."""
