package scriptlock

//go:generate go run ./cmd/scriptgen -in scripts -out generated -pkg generated -strict
