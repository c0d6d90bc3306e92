import { render } from 'preact';
import './styles.css';

function App() {
  return <main><h1>Admin console</h1></main>;
}

render(<App />, document.getElementById('app')!);
