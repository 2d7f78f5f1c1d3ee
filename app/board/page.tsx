import { BoardView } from "@/components/board/board-view";

export default function BoardPage() {
  return <BoardView />;
}
