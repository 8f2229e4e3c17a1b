package ui

// savepath.go: Fyne's save dialog hands its callback a writer it has already opened on the
// chosen file — created or truncated — before the callback can look at the path
// (fyne's dialog/file.go calls storage.Writer, then the callback). An export must check the
// path first and write only through fsx's atomic writer, so the "file" repository is wrapped
// once per app: its Writer opens nothing until the first Write. The save dialog's callback
// takes the path and closes the writer unwritten, so the chosen file is untouched whatever
// it is; any other writer of the repository writes as before, from its first byte.
//
// Invariant: no save dialog creates, truncates or writes a file. Mutation that would
// silently break it: handing out the repository's own Writer — the open image typed into
// the dialog and confirmed is emptied before the export refuses it
// (TestSaveDialogNeverTouchesTheChosenFile).

import (
	"errors"
	"sync"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/storage/repository"
)

// fileRepository is what Fyne's file repository does, all of which the wrapper passes on.
type fileRepository interface {
	repository.Repository
	repository.WritableRepository
	repository.AppendableRepository
	repository.ListableRepository
	repository.HierarchicalRepository
	repository.DeleteAllRepository
	repository.CopyableRepository
	repository.MovableRepository
}

// lazyWriters is the file repository with writers that open on their first Write.
type lazyWriters struct{ fileRepository }

func (r lazyWriters) Writer(u fyne.URI) (fyne.URIWriteCloser, error) {
	return &lazyWriter{uri: u, open: r.fileRepository.Writer}, nil
}

// lazyWriter opens its file on the first Write; closed unwritten it has touched nothing.
type lazyWriter struct {
	uri  fyne.URI
	open func(fyne.URI) (fyne.URIWriteCloser, error)
	mu   sync.Mutex
	w    fyne.URIWriteCloser
}

func (l *lazyWriter) URI() fyne.URI { return l.uri }

func (l *lazyWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w == nil {
		w, err := l.open(l.uri)
		if err != nil {
			return 0, err
		}
		l.w = w
	}
	return l.w.Write(p)
}

func (l *lazyWriter) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w == nil {
		return nil
	}
	return l.w.Close()
}

// errNoFileRepository says the app's file repository is not the one this was written for.
var errNoFileRepository = errors.New("the file repository lacks an operation the save dialog's guard passes on")

// guardSaveDialogs wraps the app's file repository (once: an app's driver registers it when
// the app starts). The error means it could not: exports then refuse to run rather than
// hand a file to a dialog that would truncate it.
func guardSaveDialogs() error {
	repo, err := repository.ForURI(storage.NewFileURI("/"))
	if err != nil {
		return err
	}
	if _, ok := repo.(lazyWriters); ok {
		return nil
	}
	fr, ok := repo.(fileRepository)
	if !ok {
		return errNoFileRepository
	}
	repository.Register("file", lazyWriters{fr})
	return nil
}
